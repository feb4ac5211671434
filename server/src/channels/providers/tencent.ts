/**
 * Tencent Hunyuan (channel type 23), the Tencent Cloud API 3.0 action `ChatCompletions`
 * (version 2023-09-01) signed with TC3-HMAC-SHA256.
 *
 * - Key: `AppId|SecretId|SecretKey` (the AppId is not needed by API 3.0; `SecretId|SecretKey`
 *   alone is accepted too). The channel's `other` is the region (optional, `X-TC-Region`).
 * - Request: `POST {base}/` (default https://hunyuan.tencentcloudapi.com) with `X-TC-Action`,
 *   `X-TC-Version`, `X-TC-Timestamp` and `Authorization: TC3-HMAC-SHA256 Credential=…/{date}/
 *   hunyuan/tc3_request, SignedHeaders=content-type;host, Signature=…` computed over the exact body.
 *   Body: `Model`, `Messages` (`Role`/`Content`; image parts as `Contents` with `ImageUrl`),
 *   `Stream`, `Temperature`, `TopP`, `StreamModeration: false`.
 * - Answer: `{Response:{Id, Created, Choices:[{Message:{Role, Content}, FinishReason}], Usage:
 *   {PromptTokens, CompletionTokens, TotalTokens}, RequestId}}`; errors with HTTP 200 as
 *   `{Response:{Error:{Code, Message}, RequestId}}`. Stream: SSE `data:` objects (no `Response`
 *   wrapper) with `Choices[].Delta`, `FinishReason` and `Usage`.
 */
import crypto from 'node:crypto';
import { msg } from '../../i18n';
import type { ChatChunk, ChatRequest, ChatResponse, ChannelInfo, FinishReason, ProviderAdaptor, SSEEvent, StreamTranslator, Usage } from '../../relay/types';
import { contentText, isRecord, newId, streamError } from '../../protocols/shared';
import { UpstreamError } from '../../relay/errors';
import { typesServedBy } from '../catalogue';

export const TENCENT_BASE = 'https://hunyuan.tencentcloudapi.com';
const SERVICE = 'hunyuan';
const VERSION = '2023-09-01';
const ACTION = 'ChatCompletions';

function credentials(key: string): { secretId: string; secretKey: string } {
  const parts = key.split('|').map((s) => s.trim());
  const [secretId, secretKey] = parts.length >= 3 ? [parts[1]!, parts[2]!] : [parts[0] ?? '', parts[1] ?? ''];
  if (!secretId || !secretKey) throw new UpstreamError(400, msg('adaptor.tencent_key'), '', 'invalid_channel_key');
  return { secretId, secretKey };
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => crypto.createHmac('sha256', key).update(s).digest();

/**
 * The TC3-HMAC-SHA256 `Authorization` value of one request (pure; exported for tests and the mock
 * check). `host` and `contentType` must be what is sent.
 */
export function tc3Authorization(p: {
  secretId: string;
  secretKey: string;
  host: string;
  contentType: string;
  body: string;
  timestamp: number;
  service?: string;
}): string {
  const service = p.service ?? SERVICE;
  const date = new Date(p.timestamp * 1000).toISOString().slice(0, 10);
  const canonical = ['POST', '/', '', `content-type:${p.contentType}\nhost:${p.host}\n`, 'content-type;host', sha256(p.body)].join('\n');
  const scope = `${date}/${service}/tc3_request`;
  const toSign = ['TC3-HMAC-SHA256', String(p.timestamp), scope, sha256(canonical)].join('\n');
  const signing = hmac(hmac(hmac(`TC3${p.secretKey}`, date), service), 'tc3_request');
  const signature = crypto.createHmac('sha256', signing).update(toSign).digest('hex');
  return `TC3-HMAC-SHA256 Credential=${p.secretId}/${scope}, SignedHeaders=content-type;host, Signature=${signature}`;
}

/** Canonical request → Hunyuan ChatCompletions body (pure; exported for tests). */
export function toTencentRequest(req: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
  const messages = (req.messages ?? []).map((m) => {
    const role = m.role === 'developer' ? 'system' : m.role;
    if (Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url')) {
      const contents = m.content.map((p) =>
        p.type === 'image_url' && isRecord(p.image_url)
          ? { Type: 'image_url', ImageUrl: { Url: String(p.image_url.url ?? '') } }
          : { Type: 'text', Text: typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '' },
      );
      return { Role: role, Contents: contents };
    }
    const out: Record<string, unknown> = { Role: role, Content: contentText(m.content) };
    if (m.role === 'tool' && m.tool_call_id) out.ToolCallId = m.tool_call_id;
    return out;
  });
  const body: Record<string, unknown> = { Model: model, Messages: messages, Stream: stream };
  if (req.temperature != null) body.Temperature = req.temperature;
  if (req.top_p != null) body.TopP = req.top_p;
  if (stream) body.StreamModeration = false;
  return body;
}

function tencentUsage(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const prompt = Number(u.PromptTokens ?? 0) || 0;
  const completion = Number(u.CompletionTokens ?? 0) || 0;
  if (!prompt && !completion) return undefined;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(u.TotalTokens ?? 0) || prompt + completion };
}

function finish(r: unknown): FinishReason {
  if (r === 'length') return 'length';
  if (r === 'sensitive') return 'content_filter';
  if (r === 'tool_calls') return 'tool_calls';
  return r ? 'stop' : null;
}

/** `{Error:{Code, Message}}` → UpstreamError with a status matching the kind of failure. */
function tencentError(e: Record<string, unknown>, raw: string): UpstreamError {
  const code = String(e.Code ?? 'InternalError');
  const status = code.startsWith('AuthFailure')
    ? 401
    : code.startsWith('RequestLimitExceeded') || code.includes('LimitExceeded')
      ? 429
      : code.startsWith('InvalidParameter') || code.startsWith('MissingParameter') || code.startsWith('UnsupportedOperation')
        ? 400
        : code.startsWith('ResourceInsufficient') || code.startsWith('FailedOperation')
          ? 403
          : 500;
  return new UpstreamError(status, `${String(e.Message ?? 'Tencent error')} (${code})`, raw, code);
}

export function fromTencentResponse(body: unknown, model: string): ChatResponse {
  const outer = isRecord(body) ? body : {};
  const b = isRecord(outer.Response) ? outer.Response : outer;
  if (isRecord(b.Error)) throw tencentError(b.Error, JSON.stringify(body));
  const choice = Array.isArray(b.Choices) && isRecord(b.Choices[0]) ? b.Choices[0] : {};
  const msg = isRecord(choice.Message) ? choice.Message : {};
  const res: ChatResponse = {
    id: typeof b.Id === 'string' ? b.Id : newId('chatcmpl-'),
    object: 'chat.completion',
    created: typeof b.Created === 'number' ? b.Created : Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: typeof msg.Content === 'string' ? msg.Content : '' },
        finish_reason: finish(choice.FinishReason) ?? 'stop',
      },
    ],
  };
  const u = tencentUsage(b.Usage);
  if (u) res.usage = u;
  return res;
}

export class TencentStreamTranslator implements StreamTranslator {
  private id = newId('chatcmpl-');
  private created = Math.floor(Date.now() / 1000);
  private u: Usage | undefined;
  private started = false;
  constructor(private readonly model: string) {}
  private chunk(delta: ChatChunk['choices'][number]['delta'], f: FinishReason = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: f }] };
  }
  push(ev: SSEEvent): ChatChunk[] {
    let d: Record<string, unknown>;
    try {
      const p = JSON.parse(ev.data);
      if (!isRecord(p)) return [];
      d = isRecord(p.Response) ? p.Response : p;
    } catch {
      return [];
    }
    if (isRecord(d.Error)) {
      const e = tencentError(d.Error, ev.data);
      throw streamError(e.message, 'api_error', ev.data);
    }
    const out: ChatChunk[] = [];
    if (!this.started) {
      this.started = true;
      if (typeof d.Id === 'string') this.id = d.Id;
      if (typeof d.Created === 'number') this.created = d.Created;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    const choice = Array.isArray(d.Choices) && isRecord(d.Choices[0]) ? d.Choices[0] : {};
    const delta = isRecord(choice.Delta) ? choice.Delta : {};
    if (typeof delta.Content === 'string' && delta.Content) out.push(this.chunk({ content: delta.Content }));
    const u = tencentUsage(d.Usage);
    if (u) this.u = u;
    const f = finish(choice.FinishReason);
    if (f) {
      out.push(this.chunk({}, f));
      if (this.u) out.push({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: this.u });
    }
    return out;
  }
  end(): ChatChunk[] {
    return [];
  }
  usage(): Usage | undefined {
    return this.u;
  }
}

const baseOf = (channel: Pick<ChannelInfo, 'baseUrl'>) => (channel.baseUrl || TENCENT_BASE).replace(/\/+$/, '');

/** Tencent's error body `{Response:{Error}}` (any status), else the text. */
export function tencentErrorMessage(status: number, body: string): string {
  try {
    const j = JSON.parse(body);
    const e = isRecord(j) && isRecord(j.Response) && isRecord(j.Response.Error) ? j.Response.Error : undefined;
    if (e) return `${String(e.Message ?? '')} (${String(e.Code ?? '')})`;
  } catch {
    /* text */
  }
  return body.trim() ? body.trim().slice(0, 500) : `upstream returned status ${status}`;
}

export const tencentAdaptor: ProviderAdaptor = {
  name: 'tencent',
  channelTypes: typesServedBy('tencent'),
  format: 'openai',
  chatRequest(req, ctx) {
    const { secretId, secretKey } = credentials(ctx.channel.key);
    const base = baseOf(ctx.channel);
    const host = new URL(base).host;
    const body = JSON.stringify(toTencentRequest(req, ctx.upstreamModel, ctx.stream));
    const timestamp = Math.floor(Date.now() / 1000);
    const contentType = 'application/json';
    const headers: Record<string, string> = {
      authorization: tc3Authorization({ secretId, secretKey, host, contentType, body, timestamp }),
      'content-type': contentType,
      'x-tc-action': ACTION,
      'x-tc-version': VERSION,
      'x-tc-timestamp': String(timestamp),
      accept: ctx.stream ? 'text/event-stream' : 'application/json',
    };
    const region = ctx.channel.other.trim();
    if (region) headers['x-tc-region'] = region;
    return { url: `${base}/`, method: 'POST', headers, body };
  },
  chatResponse(body, ctx) {
    return fromTencentResponse(body, ctx.upstreamModel);
  },
  chatStream(ctx) {
    return new TencentStreamTranslator(ctx.upstreamModel);
  },
  errorMessage: tencentErrorMessage,
};
