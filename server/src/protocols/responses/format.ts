/**
 * OpenAI Responses API as a client-facing format (`POST /v1/responses`), for calls converted to
 * a channel that does not speak it (Claude, Gemini, Chat-only OpenAI-compatible kinds …). A channel
 * that speaks Responses gets the client's body as sent (passthrough), so nothing here runs then.
 *
 * Responses request → canonical request (request.ts), canonical response → Response object
 * (answer.ts), canonical chunks → the Responses event sequence (response.created …
 * response.completed) as the official `openai` SDK's stream accumulator expects it
 * (streamWriter.ts). The vocabulary shared with the Responses adaptor (adaptor.ts) is in
 * shared.ts: usage both ways and the reasoning carried in `encrypted_content`.
 *
 * Reasoning another provider wants back verbatim (Claude thinking signatures, Gemini thought
 * signatures on tool calls) has no field of its own in a Responses client's history. It travels in
 * the one field clients send back untouched, a reasoning item's `encrypted_content`, packed as
 * `gwr1.<base64url JSON>` (see `packReasoning`); a reasoning item packed so is stripped before a
 * body reaches a real Responses upstream, which could not decrypt it.
 */
import type { InboundFormat, StreamWriterOptions } from '../../relay/types';
import { isRecord, newId } from '../shared';
import { openaiError } from '../openai/format';
import { responsesOpenAIFiles, responsesNativeOnly, responsesToChat } from './request';
import { responseObject, chatToResponsesJson } from './answer';
import { ResponsesStreamWriter } from './streamWriter';

// ---------------------------------------------------------------------------------------------
// Errors and the format

/**
 * The end of a passed-through stream that broke after it started: `response.failed` with the
 * error (what the SDK and Codex read as a failed response; a plain `error` event would not end
 * Codex's turn). A converted stream ends through its writer's `fail`, with its own response id.
 */
export function responsesStreamError(status: number, message: string, code: string): string {
  const response = responseObject(
    { id: newId('resp_'), created: Math.floor(Date.now() / 1000), model: '', status: 'failed', output: [], error: { code: code || String(status), message } },
    undefined,
  );
  return `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', response, sequence_number: 0 })}\n\n`;
}

export const responsesFormat: InboundFormat = {
  name: 'responses',
  toChat: (body) => responsesToChat(body),
  nativeOnly: (body) => responsesNativeOnly(body),
  openaiFiles: (body) => responsesOpenAIFiles(body),
  modelOf: (body) => (isRecord(body) && typeof body.model === 'string' ? body.model : undefined),
  answerJson: (res, requestedModel, clientBody) => chatToResponsesJson(res, requestedModel, clientBody),
  streamWriter(requestedModel: string, opts?: StreamWriterOptions) {
    const w = new ResponsesStreamWriter(requestedModel, opts?.clientBody);
    return { chunk: (c) => w.chunk(c), end: (u) => w.end(u), fail: (_status, message, code) => w.fail(message, code || 'upstream_error') };
  },
  error: (status, message, code) => openaiError(status, message, code),
  streamError: (status, message, code) => responsesStreamError(status, message, code),
};
