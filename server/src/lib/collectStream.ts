import type { Readable } from 'node:stream';

export interface CollectErrors {
  /** More than `limit` bytes arrived. */
  tooLarge(): Error;
  /** The stream failed. */
  failed(err: Error & { code?: string }): Error;
  /** The stream closed before its end (a peer that hung up mid-body). Default: failed(). */
  closed?(): Error;
}

/**
 * Collects a stream into one Buffer, refusing more than `limit` bytes without buffering the
 * excess. Listeners rather than `for await`: the async iterator allocates per chunk, and every
 * relay call reads two bodies. Past the limit the rest is drained (an HTTP request, so the answer
 * can still be delivered) or the stream destroyed (an upstream response).
 */
export function collectStream(stream: Readable, limit: number, errors: CollectErrors, excess: 'drain' | 'destroy'): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err?: Error) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (err) {
        stream.on('error', () => undefined); // late errors of an abandoned stream are not ours
        reject(err);
      }
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        stop(errors.tooLarge());
        if (excess === 'drain') stream.resume();
        else stream.destroy();
        return;
      }
      chunks.push(c);
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (err: Error) => stop(errors.failed(err));
    const onClose = () => stop(errors.closed ? errors.closed() : errors.failed(new Error('closed before the end')));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
