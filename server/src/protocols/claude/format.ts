/**
 * Claude Messages API as a client-facing format (`POST /v1/messages`).
 *
 * Claude request → canonical request, canonical response → Claude message, canonical chunks →
 * the Claude SSE event sequence (message_start, content_block_start/delta/stop, message_delta,
 * message_stop) that the official `@anthropic-ai/sdk` stream parser accepts. Usage is the inverse
 * of the Claude adaptor's: `input_tokens = prompt_tokens − cached − cache_creation`, so a Claude →
 * Claude round trip returns the upstream figures unchanged. Thinking signatures travel as
 * `reasoning_details` in both directions; what only Anthropic can honour is dropped on conversion
 * (docs/formats.md, "Client formats → Claude").
 */
import type { InboundFormat, InboundRoute } from '../../relay/types';
import { isRecord } from '../shared';
import { claudeToChat } from './request';
import { chatToClaudeJson } from './answer';
import { ClaudeStreamWriter } from './streamWriter';

const CLAUDE_ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
  504: 'timeout_error',
};

export function claudeError(status: number, message: string): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type: CLAUDE_ERROR_TYPE[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message } };
}

/** Claude error as one SSE event (for errors after the stream started). */
export function claudeErrorEvent(status: number, message: string): string {
  return `event: error\ndata: ${JSON.stringify(claudeError(status, message))}\n\n`;
}

/**
 * `streamError` is an extension of InboundFormat: the SSE text of an error after the stream has
 * started. Claude clients only read `event: error` (a `data:`-only event is skipped by the SDK).
 */
export const claudeFormat: InboundFormat & { streamError(status: number, message: string, code: string): string } = {
  name: 'claude',
  streamError: (status, message) => claudeErrorEvent(status, message),
  toChat: (body) => claudeToChat(body),
  modelOf: (body) => (isRecord(body) && typeof body.model === 'string' && body.model.trim() ? body.model : undefined),
  answerJson: (res, requestedModel) => chatToClaudeJson(res, requestedModel),
  streamWriter(requestedModel) {
    const w = new ClaudeStreamWriter(requestedModel);
    return { chunk: (c) => w.chunk(c), end: (u) => w.end(u) };
  },
  error: (status, message) => claudeError(status, message),
};

/**
 * `POST /v1/messages` (key in `x-api-key` or `Authorization: Bearer`). The path is matched without
 * its query: `?beta=true`, which the SDK adds to beta calls, is accepted and not forwarded (the
 * betas themselves travel in the `anthropic-beta` header).
 */
export const claudeRoute: InboundRoute = {
  method: 'POST',
  match: (path) => (path === '/v1/messages' || path === '/v1/messages/' ? {} : null),
  format: claudeFormat,
  keyStyle: 'claude',
};
