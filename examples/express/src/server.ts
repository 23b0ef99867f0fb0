import { webhookMiddleware } from '@payhook/express';
import express from 'express';
import { printNotification } from '../../shared/src/output.ts';
import { serveExample } from '../../shared/src/serve.ts';

await serveExample(({ secret, store }) => {
  const app = express();
  // With path, only /webhooks is the webhook's (other methods on it: 405, Allow: POST); other routes are untouched.
  app.use(
    webhookMiddleware({ secret, store, path: '/webhooks' }).onAny((notification, _req, delivery) => {
      // Your code: fulfil the order, record the refund... It runs once per notification; throw to get it redelivered.
      printNotification(notification, delivery);
    }),
  );
  return app;
});
