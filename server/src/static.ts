import fs from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

const NOT_CONSOLE = /^\/(api|v1|v1beta|pg|mj|metrics)(\/|$)/;

/**
 * Serves the built console from `dir`, with SPA fallback to index.html for any GET that is not
 * an API, relay or metrics path. Hashed assets are cached for a year; index.html never.
 */
export function serveConsole(dir: string | undefined): Koa.Middleware {
  const root = dir ? path.resolve(dir) : '';
  const index = root ? path.join(root, 'index.html') : '';
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || NOT_CONSOLE.test(ctx.path) || !root) return next();
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path);
    } catch {
      return next();
    }
    const file = path.join(root, path.normalize(rel));
    if (!file.startsWith(root)) return next();
    let target = index;
    try {
      const st = await fs.promises.stat(file);
      if (st.isFile()) target = file;
    } catch {
      /* SPA route → index.html */
    }
    try {
      const st = await fs.promises.stat(target);
      ctx.type = TYPES[path.extname(target)] ?? 'application/octet-stream';
      ctx.length = st.size;
      ctx.set('Cache-Control', target.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
      ctx.body = ctx.method === 'HEAD' ? null : fs.createReadStream(target);
    } catch {
      return next();
    }
  };
}
