/** Ollama's native model list on the mock upstream: `GET /api/tags` (`{models:[{name, model, …}]}`). */
import type { MockUpstream } from './index';

export function installOllamaMock(mock: MockUpstream): void {
  mock.route('GET', /^\/api\/tags$/, (_req, res) => {
    const body = JSON.stringify({
      models: [
        { name: 'llama3.2:latest', model: 'llama3.2:latest', size: 2019393189, details: { family: 'llama' } },
        { name: 'qwen2.5:7b', model: 'qwen2.5:7b', size: 4683087332, details: { family: 'qwen2' } },
        { name: 'nomic-embed-text:latest', model: 'nomic-embed-text:latest', size: 274302450, details: { family: 'nomic-bert' } },
      ],
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
}
