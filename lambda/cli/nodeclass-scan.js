#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx nodeclass-scan` works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
await import('./run.ts');
