/**
 * AWS Bedrock Claude upstream adaptor (channel type 33): the Claude Messages body, SigV4-signed,
 * sent to `invoke` or, for streams, `invoke-with-response-stream` (AWS binary event-stream
 * framing, decoded by eventstream.ts into Claude SSE events). The request/response conversion is
 * the Claude adaptor's; this file holds the AWS parts: signing (aws4), model ids, credentials, URL.
 */
import crypto from 'node:crypto';
import { msg } from '../../i18n';
import aws4 from 'aws4';
import type { AdaptorContext, ProviderAdaptor, UpstreamRequest } from '../../relay/types';
import { UpstreamError } from '../../relay/errors';
import { BedrockStreamDecoder, EVENTSTREAM_CONTENT_TYPE } from './eventstream';
import { typesServedBy } from '../catalogue';
import { own } from '../../lib/own';
import { claudeRawBody, claudeResponseSide, clientBetas } from '../../protocols/claude/adaptor';
import { toClaudeRequest } from '../../protocols/claude/upstreamRequest';

export interface SigV4Input {
  method: string;
  url: string;
  /** Headers to sign (host and x-amz-date are added when missing). */
  headers: Record<string, string>;
  body: string | Buffer;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  service: string;
  /** Also send and sign `x-amz-content-sha256` (the AWS SDKs do for Bedrock). */
  contentSha256Header?: boolean;
  /** Fixed clock for tests. */
  now?: Date;
}

/**
 * AWS Signature Version 4 (header form), by the `aws4` library. Returns the headers to send, lower-cased:
 * the input headers + host, x-amz-date, optional x-amz-content-sha256 / x-amz-security-token, authorization.
 * The length is left out: the exchange sets it from the body, and a signed one would be a second copy.
 */
export function signV4(input: SigV4Input): Record<string, string> {
  const url = new URL(input.url);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers)) headers[k.toLowerCase()] = v;
  if (input.now && !headers['x-amz-date']) headers['x-amz-date'] = input.now.toISOString().replace(/[:-]|\.\d{3}/g, '');
  if (input.contentSha256Header) headers['x-amz-content-sha256'] = crypto.createHash('sha256').update(input.body).digest('hex');
  // `extraHeadersToIgnore` is honoured by aws4 but missing from its type definitions.
  const request: aws4.Request & { extraHeadersToIgnore: Record<string, boolean> } = {
    host: url.host,
    path: `${url.pathname}${url.search}`,
    method: input.method.toUpperCase(),
    headers,
    body: input.body,
    service: input.service,
    region: input.region,
    extraHeadersToIgnore: { 'content-length': true },
  };
  const signed = aws4.sign(request, {
    accessKeyId: input.accessKeyId,
    secretAccessKey: input.secretAccessKey,
    ...(input.sessionToken ? { sessionToken: input.sessionToken } : {}),
  });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers ?? {})) {
    const name = k.toLowerCase();
    if (name !== 'content-length' && v !== undefined) out[name] = String(v);
  }
  return out;
}

/** Claude model name → Bedrock model id (ids containing a `.` are used as given). */
const BEDROCK_IDS: Record<string, string> = {
  'claude-3-haiku-20240307': 'anthropic.claude-3-haiku-20240307-v1:0',
  'claude-3-sonnet-20240229': 'anthropic.claude-3-sonnet-20240229-v1:0',
  'claude-3-opus-20240229': 'anthropic.claude-3-opus-20240229-v1:0',
  'claude-3-5-sonnet-20240620': 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'claude-3-5-sonnet-20241022': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'claude-3-5-haiku-20241022': 'anthropic.claude-3-5-haiku-20241022-v1:0',
  'claude-3-7-sonnet-20250219': 'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'claude-sonnet-4-20250514': 'anthropic.claude-sonnet-4-20250514-v1:0',
  'claude-opus-4-20250514': 'anthropic.claude-opus-4-20250514-v1:0',
  'claude-opus-4-1-20250805': 'anthropic.claude-opus-4-1-20250805-v1:0',
  'claude-sonnet-4-5-20250929': 'anthropic.claude-sonnet-4-5-20250929-v1:0',
};
export function bedrockModelId(model: string): string {
  return model.includes('.') ? model : (own(BEDROCK_IDS, model) ?? `anthropic.${model}`);
}

/** Channel key `AccessKeyId|SecretAccessKey|Region` (region may also be in `other`). */
export function awsCredentials(channel: AdaptorContext['channel']): { accessKeyId: string; secretAccessKey: string; region: string; sessionToken?: string } {
  const [accessKeyId = '', secretAccessKey = '', region = '', sessionToken] = channel.key.split('|').map((p) => p.trim());
  const r = region || channel.other.trim() || 'us-east-1';
  if (!accessKeyId || !secretAccessKey) throw new UpstreamError(401, msg('adaptor.aws_key'), '', 'invalid_channel_key');
  if (!/^[a-z0-9-]+$/.test(r)) throw new UpstreamError(400, msg('adaptor.aws_region', { region: r }), '', 'invalid_channel_key');
  return { accessKeyId, secretAccessKey, region: r, ...(sessionToken ? { sessionToken } : {}) };
}

export function bedrockRequest(ctx: AdaptorContext, model: string, claudeBody: Record<string, unknown>, now?: Date): UpstreamRequest {
  // streams: invoke-with-response-stream answers in AWS's binary event-stream framing, decoded by
  // the adaptor's streamSplitter (eventstream.ts) into Claude SSE blocks.
  const creds = awsCredentials(ctx.channel);
  const { model: _m, stream: _s, ...rest } = claudeBody;
  const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', ...rest });
  const base = (ctx.channel.baseUrl || `https://bedrock-runtime.${creds.region}.amazonaws.com`).replace(/\/+$/, '');
  const url = `${base}/model/${encodeURIComponent(bedrockModelId(model))}/${ctx.stream ? 'invoke-with-response-stream' : 'invoke'}`;
  const headers = signV4({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', accept: ctx.stream ? EVENTSTREAM_CONTENT_TYPE : 'application/json' },
    body,
    ...creds,
    service: 'bedrock',
    contentSha256Header: true,
    now,
  });
  return { url, method: 'POST', headers, body };
}

/** AWS Bedrock Claude (type 33): `invoke`, and `invoke-with-response-stream` (event-stream framing). */
export const awsClaudeAdaptor: ProviderAdaptor = {
  name: 'bedrock',
  channelTypes: typesServedBy('bedrock'),
  ...claudeResponseSide(),
  chatRequest(req, ctx) {
    const { body, model } = toClaudeRequest(req, ctx);
    return bedrockRequest(ctx, model, body);
  },
  rawRequest(body, ctx) {
    // Bedrock takes no mid-conversation system turns; betas go in the body, which is what it reads
    const { body: out, model } = claudeRawBody(body ?? {}, ctx, { systemTurns: () => false });
    const betas = clientBetas(ctx);
    if (betas.length) {
      const sent = Array.isArray(out.anthropic_beta) ? out.anthropic_beta.filter((b): b is string => typeof b === 'string') : [];
      out.anthropic_beta = [...new Set([...sent, ...betas])];
    }
    return bedrockRequest(ctx, model, out);
  },
  streamSplitter(contentType, maxEventBytes) {
    return contentType.includes(EVENTSTREAM_CONTENT_TYPE) ? new BedrockStreamDecoder(maxEventBytes) : undefined;
  },
};
