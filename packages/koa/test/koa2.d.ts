// The Koa 2 devDependency alias has no types of its own; its API is the subset of Koa 3's used here.
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
