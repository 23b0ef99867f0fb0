import express from 'express';
import { serveExample } from '../../shared/src/serve.ts';
import { openQueueBackend, workMsFrom } from './backend.ts';
import { paymentWebhook } from './webhook.ts';

// The web process: verifies each delivery, queues it, and answers 200 once the queue holds it; `npm run worker` runs it.
await serveExample(
  ({ secret, store, queue }) => {
    const app = express();
    app.use(paymentWebhook({ secret, store, queue, workMs: workMsFrom(process.env) }));
    return app;
  },
  () => openQueueBackend(process.env),
);
