// A webhook receiver for trying the PDF API's webhooks on your machine (docs/async-and-webhooks.md,
// "Testing webhooks locally"). It verifies every delivery's Standard Webhooks signature with your
// key's secret and prints what it got: run it with `node examples/webhook-receiver/receiver.mjs`.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.PDFAPI_WEBHOOK_SECRET; // whsec_…, printed by `npm run keys -- create`
if (!secret?.startsWith('whsec_')) throw new Error('Set PDFAPI_WEBHOOK_SECRET to your key’s whsec_… webhook secret.');
const webhook = new Webhook(secret);
const port = Number(process.env.RECEIVER_PORT ?? 8765);

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    // Verify the raw bytes as they arrived: parsed and serialized again, they would not match.
    const body = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      event = webhook.verify(body, request.headers); // throws on a bad signature or a timestamp over 5 minutes off
    } catch (error) {
      console.log(`rejected ${request.headers['webhook-id'] ?? 'a delivery'}: ${error.message}`);
      response.writeHead(400).end();
      return;
    }
    const job = event.data;
    const pdf = job.result?.url ?? job.result?.error?.code ?? '';
    console.log(`verified ${event.type} ${job.job_id} ${job.status} ${pdf} (webhook-id ${request.headers['webhook-id']})`);
    response.writeHead(204).end(); // any 2xx: delivered; anything else is retried with the same webhook-id
  });
});
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/`));
