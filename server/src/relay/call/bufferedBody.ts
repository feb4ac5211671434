import type { ServerResponse } from 'node:http';
import { msg } from '../../i18n';
import { UpstreamError } from '../errors';
import type { ChannelEntry } from '../../channels/routeTable';
import type { ChannelWay } from '../../channels/providers';
import type { UpstreamExchange } from '../upstreamExchange';
import { countTextTokens } from '../tokenizer';
import { responseText } from '../../protocols/openai/adaptor';
import type { AdaptorContext, Endpoint, ProviderAdaptor } from '../types';
import { formatOverhead, OVERHEAD_HEADER } from '../../metrics';
import { promptFallback, RELAY_CORS, UNCONVERTED_HEADER, unconvertedNote, type RelayCall } from './relayCall';
import { tokensFrom, type Answer, type Tokens } from './outcome';

const JSON_ENDPOINTS_WITH_USAGE = new Set<Endpoint>(['chat', 'completions', 'embeddings', 'responses', 'rerank']);

/** A whole (non-streamed) answer, converted to the client's format, sent once billed. */
class BufferedAnswer implements Answer {
  constructor(
    readonly channel: ChannelEntry,
    readonly upstreamModel: string,
    readonly tokens: Tokens,
    readonly frtMs: number,
    private readonly call: RelayCall,
    private readonly body: Buffer | string,
    private readonly type: string,
  ) {}

  finish(): void {
    // Written straight to the socket: Koa's body setter (type sniffing, mime lookup, length)
    // costs measurably per call and adds nothing here. Headers set earlier (CORS) are kept.
    const { ctx, timer } = this.call;
    const res = ctx.res;
    if (res.destroyed || res.writableEnded) return;
    ctx.respond = false;
    const body = typeof this.body === 'string' ? Buffer.from(this.body) : this.body;
    // The whole head in one call (no header set before on the Koa-free path): Node then formats
    // it straight from this list instead of going through setHeader per field.
    const head = [
      'content-type',
      this.type === 'application/json' ? 'application/json; charset=utf-8' : this.type,
      'content-length',
      String(body.length),
      OVERHEAD_HEADER,
      formatOverhead(timer.overheadMs()),
      ...RELAY_CORS,
    ];
    const note = unconvertedNote(this.call);
    if (note) head.push(UNCONVERTED_HEADER, note);
    res.writeHead(200, head);
    res.end(body);
  }
}

/** Reads a whole upstream answer and converts it; throws UpstreamError when it is not readable. */
export async function bufferedAnswer(
  call: RelayCall,
  ch: ChannelEntry,
  adaptor: ProviderAdaptor,
  actx: AdaptorContext,
  up: UpstreamExchange,
  mode: ChannelWay['mode'],
  calls: number,
  ctype: string,
): Promise<Answer> {
  const passthrough = mode === 'passthrough';
  const buf = await up.collect();
  call.timer.upstreamEnd();
  const textual = call.endpoint === 'transcriptions' || call.endpoint === 'translations';
  let json: unknown;
  if (!textual || ctype.includes('json')) {
    try {
      json = JSON.parse(buf.toString('utf8'));
    } catch {
      if (!textual) throw new UpstreamError(502, msg('upstream.bad_json'), buf.toString('utf8').slice(0, 1000), 'bad_response_body');
    }
  }
  if (json !== undefined && (json === null || typeof json !== 'object')) {
    throw new UpstreamError(502, msg('upstream.bad_json'), buf.toString('utf8').slice(0, 1000), 'bad_response_body');
  }
  let tokens: Tokens;
  let out: Buffer | string = buf;
  let outType = ctype || 'application/json';
  if (passthrough) {
    if (textual) {
      const text = json && typeof (json as { text?: unknown }).text === 'string' ? String((json as { text: string }).text) : buf.toString('utf8');
      const u = json ? adaptor.usageFromBody?.(json, actx) : undefined;
      tokens =
        u && (u.prompt_tokens || u.completion_tokens)
          ? tokensFrom(u, call, '', calls)
          : { prompt: 0, completion: countTextTokens(text, call.model), cached: 0, calls };
    } else {
      const u = adaptor.usageFromBody?.(json, actx);
      tokens =
        JSON_ENDPOINTS_WITH_USAGE.has(call.endpoint) || u
          ? tokensFrom(u, call, () => responseText(json), calls)
          : { prompt: promptFallback(call), completion: 0, cached: 0, calls };
    }
  } else if (mode === 'endpoint' || mode === 'via-openai') {
    // OpenAI's shape in between when the client's format converts this endpoint (Gemini embeddings)
    const inbound = mode === 'via-openai' ? call.inbound.convertEndpoint?.(call.endpoint) : undefined;
    const request = call.body ?? {};
    const conv = adaptor.endpointResponse
      ? adaptor.endpointResponse(json, actx, inbound ? inbound.toOpenAI(request) : request)
      : { body: json, usage: adaptor.usageFromBody?.(json, actx) };
    tokens = tokensFrom(conv.usage, call, '', calls);
    out = JSON.stringify(inbound ? inbound.fromOpenAI(conv.body, request) : conv.body);
    outType = 'application/json';
  } else {
    const chatRes = adaptor.chatResponse(json, actx);
    tokens = tokensFrom(chatRes.usage, call, () => responseText(chatRes), calls);
    // An upstream that reports no usage (AI Proxy library): the client gets the relay's count, as billed.
    if (!chatRes.usage) chatRes.usage = { prompt_tokens: tokens.prompt, completion_tokens: tokens.completion, total_tokens: tokens.prompt + tokens.completion };
    out = call.inbound.answerJson(chatRes, call.model, call.body);
    outType = 'application/json';
  }
  return new BufferedAnswer(ch, actx.upstreamModel, tokens, Math.round(call.timer.totalMs()), call, out, outType);
}

/** Speech: the audio goes to the client as it comes, once billed (by the input text). */
class AudioAnswer implements Answer {
  readonly tokens: Tokens;
  readonly frtMs: number;

  constructor(
    private readonly call: RelayCall,
    readonly channel: ChannelEntry,
    readonly upstreamModel: string,
    private readonly up: UpstreamExchange,
    private readonly type: string,
    calls: number,
  ) {
    call.timer.upstreamEnd();
    this.tokens = { prompt: countTextTokens(String(call.body?.input ?? ''), call.model), completion: 0, cached: 0, calls };
    this.frtMs = Math.round(call.timer.totalMs());
  }

  finish(): void {
    const { ctx, timer } = this.call;
    const out = ctx.res;
    ctx.respond = false;
    out.statusCode = 200;
    out.setHeader('content-type', this.type || 'audio/mpeg');
    out.setHeader(OVERHEAD_HEADER, formatOverhead(timer.overheadMs()));
    out.setHeader(RELAY_CORS[0], RELAY_CORS[1]);
    pipeToResponse(this.up, out);
  }
}

export function audioAnswer(call: RelayCall, ch: ChannelEntry, upstreamModel: string, up: UpstreamExchange, ctype: string, calls: number): Answer {
  return new AudioAnswer(call, ch, upstreamModel, up, ctype, calls);
}

/** Audio answers: the upstream body to the client as it comes, with backpressure; either side failing ends both. */
function pipeToResponse(up: UpstreamExchange, out: ServerResponse): void {
  const onDrain = () => up.resume();
  const onClose = () => {
    if (!out.writableFinished) up.abort();
  };
  const stop = () => {
    out.off('drain', onDrain);
    out.off('close', onClose);
  };
  out.on('drain', onDrain);
  out.on('close', onClose);
  out.on('error', () => undefined);
  up.pipe({
    data: (chunk) => out.write(chunk),
    end: () => {
      stop();
      out.end();
    },
    error: () => {
      stop();
      out.destroy();
    },
  });
}
