// Manual look at the console: starts the e2e stack and keeps it running (prints the URL).
import { startStack } from './stack';

void startStack().then((s) => {
  console.log(`console: ${s.baseUrl}  mock upstream: ${s.mock.url}`);
  process.once('SIGTERM', () => void s.stop().then(() => process.exit(0)));
  process.once('SIGINT', () => void s.stop().then(() => process.exit(0)));
});
