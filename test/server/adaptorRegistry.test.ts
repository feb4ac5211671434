import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CHANNEL_TYPE, type ChannelTypeEntry } from '../../server/src/channels/kinds';
import { CHANNEL_TYPES, adaptorIdOf, typesServedBy } from '../../server/src/channels/catalogue';
import { ADAPTORS, adaptorFor, channelSpeaks, channelWay, loadAdaptor, registerAdaptor } from '../../server/src/channels/providers';
import { responsesAdaptor } from '../../server/src/protocols/responses/adaptor';
import { azureResponsesAdaptor } from '../../server/src/channels/providers/azure';
import { claudeAdaptor } from '../../server/src/protocols/claude/adaptor';
import { openaiAdaptor } from '../../server/src/protocols/openai/adaptor';
import type { ProviderAdaptor } from '../../server/src/relay/types';

/**
 * The adaptor registry has no list of its own: it loads, from server/src/channels/providers/, the
 * module of every adaptor id the catalogue names. A provider is its module plus its entry.
 */
const ROOT = path.resolve(__dirname, '../..');
const DIR = path.join(ROOT, 'server/src/channels/providers');
const named = [...new Set(CHANNEL_TYPES.map(adaptorIdOf))].sort();
/** The four protocols' adaptors live with their protocol; every other id is a provider module in DIR. */
const PROTOCOLS = new Set(['openai', 'responses', 'claude', 'gemini']);
const moduleOf = (id: string) =>
  PROTOCOLS.has(id)
    ? path.join(ROOT, 'server/src/protocols', id, 'adaptor.ts')
    : path.join(DIR, fs.existsSync(path.join(DIR, `${id}.ts`)) ? `${id}.ts` : `${id}/index.ts`);

describe('adaptor registry', () => {
  it('holds exactly the adaptors the catalogue names, each the export of its own module', () => {
    expect(Object.keys(ADAPTORS).sort()).toEqual(named);
    for (const id of named) {
      const file = moduleOf(id);
      expect([id, fs.existsSync(file)]).toEqual([id, true]);
      const exported = Object.values(require(file) as Record<string, unknown>); // eslint-disable-line @typescript-eslint/no-require-imports -- the module by its path, as the registry finds it
      expect([id, exported.includes(ADAPTORS[id])]).toEqual([id, true]);
      expect([id, ADAPTORS[id].name]).toEqual([id, id]);
      expect([id, [...ADAPTORS[id].channelTypes].sort((a, b) => a - b)]).toEqual([id, typesServedBy(id).sort((a, b) => a - b)]);
    }
    expect(ADAPTORS.claude).toBe(claudeAdaptor);
    expect(ADAPTORS.openai).toBe(openaiAdaptor);
  });

  it('answers every catalogue type with the adaptor its entry names', () => {
    for (const e of CHANNEL_TYPES) expect([e.name, adaptorFor(e.id)]).toEqual([e.name, ADAPTORS[adaptorIdOf(e)]]);
    expect(adaptorFor(CHANNEL_TYPE.Anthropic)).toBe(claudeAdaptor);
    expect(adaptorFor(CHANNEL_TYPE.AwsClaude).name).toBe('bedrock');
    expect(adaptorFor(CHANNEL_TYPE.DeepSeek)).toBe(openaiAdaptor); // no `adaptor`: OpenAI-compatible
  });

  it('refuses, naming the entry, a catalogue entry whose adaptor has no module', () => {
    // A new kind whose entry names an adaptor nobody wrote (its name is not a CHANNEL_TYPE key yet either).
    const extra = { id: 990, name: 'NewKind', label: 'New kind', color: 'grey', offered: false, adaptor: 'noSuchProvider' } as unknown as ChannelTypeEntry;
    jest.isolateModules(() => {
      jest.doMock('../../server/src/channels/catalogue', () => {
        const real = jest.requireActual<typeof import('../../server/src/channels/catalogue')>('../../server/src/channels/catalogue');
        return { ...real, CHANNEL_TYPES: [...real.CHANNEL_TYPES, extra] };
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded inside isolateModules, after the mocked catalogue
      expect(() => require('../../server/src/channels/providers')).toThrow(
        "the channel catalogue names adaptor 'noSuchProvider' (for NewKind (990)) but server/src/channels/providers/ has neither noSuchProvider.ts nor noSuchProvider/index.ts",
      );
    });
    jest.dontMock('../../server/src/channels/catalogue');
  });

  it('refuses a module that does not export an adaptor of that name, and ids that are not module names', () => {
    expect(() => loadAdaptor('eventstream')).toThrow(
      "server/src/channels/providers/eventstream.ts (adaptor 'eventstream' of no catalogue entry) must export exactly one ProviderAdaptor whose name is 'eventstream'; it exports 0",
    );
    for (const bad of ['../types', 'a/b', '', '.hidden']) expect(() => loadAdaptor(bad)).toThrow('is not a module name in server/src/channels/providers/');
  });

  it('loads a provider kept in a folder (<id>/index.ts)', () => {
    const dir = path.join(DIR, 'registryTestFolder');
    const fake: ProviderAdaptor = { ...openaiAdaptor, name: 'registryTestFolder', channelTypes: [] };
    jest.doMock(path.join(dir, 'index.ts'), () => ({ fake, helper: 1 }), { virtual: true });
    expect(loadAdaptor('registryTestFolder')).toBe(fake);
    jest.dontMock(path.join(dir, 'index.ts'));
  });

  it('still takes adaptors registered at run time', () => {
    const plug: ProviderAdaptor = { ...openaiAdaptor, name: 'plug-in', channelTypes: [991] };
    expect(adaptorFor(991)).toBe(openaiAdaptor);
    registerAdaptor(plug);
    expect(adaptorFor(991)).toBe(plug);
  });

  it("takes an OpenAI-protocol adaptor's Responses side from the adaptor itself, no list to edit", () => {
    const speaks = (type: number, upstream_protocol?: string) => [...channelSpeaks({ type, setting: upstream_protocol ? { upstream_protocol } : {} })].sort();
    const responsesVia = (type: number) => channelWay({ type, setting: { upstream_protocol: 'both' } }, 'responses', 'responses')?.adaptor;
    // Built by spreading the OpenAI adaptor: inherits the OpenAI-compatible Responses URL.
    expect(responsesVia(CHANNEL_TYPE.OpenAI)).toBe(responsesAdaptor);
    expect(responsesVia(CHANNEL_TYPE.Ollama)).toBe(responsesAdaptor);
    expect(responsesVia(CHANNEL_TYPE.Xinference)).toBe(responsesAdaptor);
    expect(responsesVia(CHANNEL_TYPE.Azure)).toBe(azureResponsesAdaptor);
    // Says it has none: chat only whatever the channel's setting.
    expect(speaks(CHANNEL_TYPE.Cloudflare, 'both')).toEqual(['openai']);
    expect(speaks(CHANNEL_TYPE.Cloudflare, 'responses')).toEqual(['openai']);
    // A new OpenAI-protocol provider registered at run time, built from the OpenAI adaptor.
    const plug: ProviderAdaptor = { ...openaiAdaptor, name: 'plug-responses', channelTypes: [992] };
    registerAdaptor(plug);
    expect(speaks(992, 'both')).toEqual(['openai', 'responses']);
    expect(responsesVia(992)).toBe(responsesAdaptor);
    registerAdaptor({ ...plug, channelTypes: [993], responsesSide: 'none' });
    expect(speaks(993, 'both')).toEqual(['openai']);
    // Responses only: converted calls are answered through the Responses side too.
    expect(channelWay({ type: 992, setting: { upstream_protocol: 'responses' } }, 'chat', 'openai')?.adaptor).toBe(responsesAdaptor);
  });

  it('is found by the esbuild bundle npm start runs (server/build.mjs)', () => {
    // Inside the repository (server/dist, git-ignored), so the bundle's external requires find node_modules.
    fs.mkdirSync(path.join(ROOT, 'server/dist'), { recursive: true });
    const out = path.join(fs.mkdtempSync(path.join(ROOT, 'server/dist/registry-test-')), 'registry.cjs');
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'server/build.mjs'), path.join(ROOT, 'test/fixtures/adaptorRegistryEntry.ts'), out], { cwd: ROOT });
      const bundled = JSON.parse(execFileSync(process.execPath, [out], { cwd: ROOT, encoding: 'utf8' })) as {
        adaptors: string[];
        byType: Record<string, string>;
      };
      expect(bundled.adaptors).toEqual(named);
      expect(bundled.byType).toEqual(Object.fromEntries(CHANNEL_TYPES.map((e) => [String(e.id), adaptorIdOf(e)])));
      expect(bundled.byType[CHANNEL_TYPE.Anthropic]).toBe('claude');
    } finally {
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
    }
  });
});
