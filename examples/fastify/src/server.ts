import { webhookPlugin } from '@payhook/fastify';
import Fastify from 'fastify';
import { printNotification } from '../../shared/src/output.ts';
import { serveExample } from '../../shared/src/serve.ts';

await serveExample(async ({ secret, store }) => {
  const app = Fastify();
  // The route has its own body handling: other routes keep the app's parsers; other methods on it: 405, Allow: POST.
  await app.register(
    webhookPlugin({ secret, store, path: '/webhooks' }).onAny((notification, _request, delivery) => {
      // Your code: fulfil the order, record the refund... It runs once per notification; throw to get it redelivered.
      printNotification(notification, delivery);
    }),
  );
  await app.ready();
  // Fastify's request listener, served by the example's node:http server (app.listen() does the same on its own).
  return app.routing;
});
