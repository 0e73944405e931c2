/**
 * `npm start`: the whole service on http://127.0.0.1:$PORT with its state under $DATA_DIR.
 */
// Set before the service's modules load: Powertools reads its switches when it is constructed.
// CloudWatch metric lines mean nothing locally and would drown the logs.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
const { startLocalStack } = await import('./stack.ts');

const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.DATA_DIR ?? '.local';

try {
  const stack = await startLocalStack({ dataDir, port });
  console.log(`PDF API listening on ${stack.apiUrl} (state in ${dataDir}, first PDF after ${stack.coldStartMs} ms)`);
  console.log('Create an API key:  npm run keys -- create --tier free --name me');
  console.log(`Then:               curl -X POST ${stack.apiUrl}/v1/pdf/generate -H "Authorization: Bearer <key>" -H "Content-Type: application/json" -d '{"html":"<h1>Hello</h1>"}'`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  console.error(`The local stack could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
