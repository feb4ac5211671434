import { PassThrough } from 'node:stream';
import { collectStream, type CollectErrors } from '../../server/src/lib/collectStream';

const errors: CollectErrors = {
  tooLarge: () => new Error('too large'),
  failed: (err) => new Error(`failed: ${err.message}`),
  closed: () => new Error('closed early'),
};

describe('collectStream (request and upstream bodies)', () => {
  test('joins the chunks in order', async () => {
    const s = new PassThrough();
    const p = collectStream(s, 100, errors, 'destroy');
    s.write('ab');
    s.write('cd');
    s.end('e');
    expect((await p).toString()).toBe('abcde');
  });

  test('past the limit: refused; "drain" keeps reading the rest, "destroy" ends the stream', async () => {
    const drained = new PassThrough();
    const p1 = collectStream(drained, 4, errors, 'drain');
    drained.write('abc');
    drained.write('defgh');
    await expect(p1).rejects.toThrow('too large');
    drained.end('more');
    await new Promise((r) => drained.once('end', r)); // the excess was consumed, not left buffered
    expect(drained.destroyed || drained.readableEnded).toBe(true);

    const destroyed = new PassThrough();
    const p2 = collectStream(destroyed, 4, errors, 'destroy');
    destroyed.write('abcdefgh');
    await expect(p2).rejects.toThrow('too large');
    expect(destroyed.destroyed).toBe(true);
  });

  test('a stream error and a close before the end are mapped by the caller', async () => {
    const broken = new PassThrough();
    const p1 = collectStream(broken, 100, errors, 'destroy');
    broken.write('ab');
    broken.destroy(new Error('reset'));
    await expect(p1).rejects.toThrow('failed: reset');

    const cut = new PassThrough();
    const p2 = collectStream(cut, 100, errors, 'destroy');
    cut.write('ab');
    cut.destroy();
    await expect(p2).rejects.toThrow('closed early');
  });
});
