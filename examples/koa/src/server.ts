import { webhookMiddleware } from '@payhook/koa';
import Koa from 'koa';
import { printNotification } from '../../shared/src/output.ts';
import { serveExample } from '../../shared/src/serve.ts';

await serveExample(({ secret, store }) => {
  const app = new Koa();
  app.use(
    webhookMiddleware({ secret, store, path: '/webhooks' }).onAny((notification, _ctx, delivery) => {
      // Your code: fulfil the order, record the refund... It runs once per notification; throw to get it redelivered.
      printNotification(notification, delivery);
    }),
  );
  return app.callback();
});
