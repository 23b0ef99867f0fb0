// The Express 4 devDependency alias has no types of its own; its API is the subset of Express 5's used here.
declare module 'express4' {
  import express from 'express';
  export default express;
}
