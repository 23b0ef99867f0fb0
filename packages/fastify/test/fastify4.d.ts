// The Fastify 4 devDependency alias ships Fastify 4's own types, which are not Fastify 5's: the tests build both
// versions' apps through one code path, so they see it as Fastify 5's API (the subset used here is the same).
declare module 'fastify4' {
  import fastify from 'fastify';
  export default fastify;
}

declare module 'formbody7' {
  import formbody from '@fastify/formbody';
  export default formbody;
}
