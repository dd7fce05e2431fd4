#!/usr/bin/env node
// The CLI from the TypeScript sources, through tsx: what bin/nodeclass-scan.js runs in a checkout
// (so `npx nodeclass-scan` works right after `npm ci`, no build). The package runs dist/ instead.
import { register } from 'tsx/esm/api';

register();
await import('./run.ts');
