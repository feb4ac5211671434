/**
 * multipart/form-data bodies on the relay: image edits, audio transcriptions and translations
 * (`relay/index.ts`) and videos (`tasks/video.ts`).
 *
 * The body is parsed once, by a standards-following parser (@fastify/busboy), and what goes
 * upstream is the body **as the gateway parsed it**, written anew under a fresh boundary: every
 * part the parser saw, in order, with its name, file name and content type, and the fields the
 * gateway reads (model, n, seconds …) with the values it billed. Whatever another parser might
 * read differently in the client's bytes (a duplicate field, an unquoted or `name*=` name, two
 * `name` parameters, a delimiter with trailing characters, parts after the closing delimiter,
 * LF-only line ends, a Content-Transfer-Encoding) never reaches the upstream. On top of that, a
 * field the gateway reads must come once and as text: a duplicate, or a file under that name, is
 * a 400 before anything is billed. See docs/security.md, "Multipart uploads".
 *
 * Memory: the parts are views into the request body (no copy); the rewritten body is one copy of
 * it, after which the request body is garbage. The relay's body limit has already been applied.
 */
import crypto from 'node:crypto';
import { Busboy } from '@fastify/busboy';
import { msg } from '../i18n';
import { RelayError } from './errors';

/** At most this many parts in one body (OpenAI's largest form, image edits, has 16 images and a dozen fields). */
export const MULTIPART_MAX_PARTS = 256;
/** Header lines read per part (Content-Disposition and Content-Type are the ones that count). */
const MAX_HEADER_PAIRS = 32;
/** Transfer encodings that leave the bytes as they are (RFC 7578 §4.7: senders send none). */
const IDENTITY_ENCODINGS = new Set(['7bit', '8bit', 'binary']);

export interface MultipartPart {
  name: string;
  /** Set for a file part (`filename=` present, even empty). */
  filename: string | undefined;
  /** Lower-cased media type without parameters (`text/plain` when the part has none). */
  type: string;
  chunks: Buffer[];
}

const malformed = () => new RelayError(400, 'relay.multipart_malformed', 'invalid_request');

/** A parsed multipart/form-data body: the fields the gateway reads, and the body to forward. */
export class MultipartForm {
  /** Built by parseMultipart. `read`: the fields the gateway reads (each found at most once, as text); `source`: the request body. */
  constructor(
    private readonly parts: MultipartPart[],
    private readonly read: Map<string, MultipartPart>,
    private readonly source: Buffer,
  ) {}

  /** The value of a field the gateway reads (UTF-8, trimmed); undefined when absent. */
  field(name: string): string | undefined {
    const p = this.read.get(name);
    return p ? Buffer.concat(p.chunks).toString('utf8').trim() : undefined;
  }

  /** Sets a read field to the value the gateway bills and checks; a field the body lacked is added first. */
  set(name: string, value: string): void {
    const p = this.read.get(name);
    const chunks = [Buffer.from(value, 'utf8')];
    if (p) {
      p.chunks = chunks;
      p.type = 'text/plain';
    } else {
      const added: MultipartPart = { name, filename: undefined, type: 'text/plain', chunks };
      this.read.set(name, added);
      this.parts.unshift(added);
    }
  }

  /** The body to forward: every part as parsed, the read fields as set, under a new boundary. */
  encode(): { body: Buffer; contentType: string } {
    let boundary: string;
    // A delimiter is CRLF "--" boundary; part bytes all come from the request body (or are set
    // values), and header values carry no CR/LF, so a boundary absent from those cannot occur.
    do boundary = `----GatewayFormBoundary${crypto.randomBytes(16).toString('hex')}`;
    while (this.source.includes(boundary) || [...this.read.values()].some((p) => p.chunks.some((c) => c.includes(boundary))));
    const out: Buffer[] = [];
    for (const p of this.parts) {
      let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(p.name)}"`;
      if (p.filename !== undefined) head += `; filename="${quote(p.filename)}"`;
      if (p.filename !== undefined || p.type !== 'text/plain') head += `\r\nContent-Type: ${p.type}`;
      out.push(Buffer.from(`${head}\r\n\r\n`, 'utf8'), ...p.chunks, CRLF);
    }
    out.push(Buffer.from(`--${boundary}--\r\n`, 'latin1'));
    return { body: Buffer.concat(out), contentType: `multipart/form-data; boundary=${boundary}` };
  }
}

const CRLF = Buffer.from('\r\n', 'latin1');

/** A name or file name in a quoted-string, the way browsers write them (WHATWG form-data encoding). */
const quote = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/**
 * Parses a multipart/form-data body. `read`: the fields the gateway reads — each may come at most
 * once and must be a text field (no `filename`). Throws a 400 RelayError (OpenAI's envelope on the
 * relay) for a body that is not well-formed multipart/form-data: no boundary, a part without a
 * name, a missing closing delimiter, more than MULTIPART_MAX_PARTS parts, or a transfer encoding.
 */
export function parseMultipart(raw: Buffer, contentType: string, read: readonly string[]): Promise<MultipartForm> {
  return new Promise<MultipartForm>((resolve, reject) => {
    const parts: MultipartPart[] = [];
    let settled = false;
    const fail = (err: RelayError) => {
      if (settled) return;
      settled = true;
      parts.length = 0;
      reject(err);
    };
    let bb: ReturnType<typeof Busboy>;
    try {
      // Every part is taken as bytes (no charset decoding): what we forward is what we read.
      bb = Busboy({
        headers: { 'content-type': contentType },
        isPartAFile: () => true,
        limits: { parts: MULTIPART_MAX_PARTS, headerPairs: MAX_HEADER_PAIRS },
      });
    } catch {
      reject(malformed()); // no boundary, or not a form
      return;
    }
    // The parser gives no name or file name (undefined) when the part has none.
    bb.on('file', (name: string | undefined, stream, filename: string | undefined, encoding: string, mime: string) => {
      stream.on('error', () => fail(malformed()));
      if (!name) fail(malformed());
      else if (!IDENTITY_ENCODINGS.has(encoding)) fail(new RelayError(400, 'relay.multipart_transfer_encoding', 'invalid_request'));
      if (settled || !name) {
        stream.resume();
        return;
      }
      const part: MultipartPart = { name, filename, type: mime || 'text/plain', chunks: [] };
      parts.push(part);
      stream.on('data', (c: Buffer) => {
        if (!settled) part.chunks.push(c);
      });
    });
    bb.on('partsLimit', () => fail(new RelayError(400, msg('relay.multipart_too_many_parts', { max: MULTIPART_MAX_PARTS }), 'invalid_request')));
    bb.on('error', () => fail(malformed()));
    bb.on('finish', () => {
      if (settled) return;
      const wanted = new Set(read);
      const found = new Map<string, MultipartPart>();
      for (const p of parts) {
        if (!wanted.has(p.name)) continue;
        if (found.has(p.name)) return fail(new RelayError(400, msg('relay.multipart_duplicate_field', { field: p.name }), 'invalid_request'));
        if (p.filename !== undefined) return fail(new RelayError(400, msg('relay.multipart_file_field', { field: p.name }), 'invalid_request'));
        found.set(p.name, p);
      }
      settled = true;
      resolve(new MultipartForm(parts, found, raw));
    });
    bb.end(raw);
  });
}
