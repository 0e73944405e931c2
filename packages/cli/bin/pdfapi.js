#!/usr/bin/env node
// npm's bin for pdfapi: the bundled CLI (dist/pdfapi.js, made by the build). A file of its own so
// that npm links the bin even before the build ran in a fresh checkout.
import module from 'node:module';

// Node 22.1 and later keep the compiled bundle between runs: pdfapi starts faster from its second run.
module.enableCompileCache?.();
await import('../dist/pdfapi.js');
