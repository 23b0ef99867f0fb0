// @koa/router 14 ships no types (15 does); this is the part of its API the tests use.
declare module '@koa/router' {
  import type { DefaultContext, DefaultState, Middleware } from 'koa';

  export default class Router<StateT = DefaultState, ContextT = DefaultContext> {
    constructor(options?: { prefix?: string });
    get(path: string, ...middleware: Middleware<StateT, ContextT>[]): this;
    post(path: string, ...middleware: Middleware<StateT, ContextT>[]): this;
    routes(): Middleware<StateT, ContextT>;
  }
}
