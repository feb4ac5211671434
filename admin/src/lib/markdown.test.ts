import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

describe('markdown', () => {
  it('headings, paragraphs, emphasis, code, links', () => {
    expect(renderMarkdown('# Title\n\nHello **bold** and *it* with `a<b>`\nnext line\n\n[docs](https://d.example/x)')).toBe(
      '<h1>Title</h1>\n<p>Hello <strong>bold</strong> and <em>it</em> with <code>a&lt;b&gt;</code><br>next line</p>\n<p><a href="https://d.example/x" target="_blank" rel="noreferrer">docs</a></p>',
    );
  });

  it('lists, quotes, rules and fenced code', () => {
    expect(renderMarkdown('- a\n- b\n1. one\n\n> note\n---\n```\n<x>\n```')).toBe(
      '<ul><li>a</li><li>b</li></ul>\n<ol><li>one</li></ol>\n<blockquote>note</blockquote>\n<hr>\n<pre><code>&lt;x&gt;</code></pre>',
    );
  });

  it('escapes HTML and refuses script URLs', () => {
    expect(renderMarkdown('<script>alert(1)</script> [x](javascript:alert(1))')).toBe(
      '<p>&lt;script&gt;alert(1)&lt;/script&gt; <a href="#" target="_blank" rel="noreferrer">x</a>)</p>',
    );
  });
});
