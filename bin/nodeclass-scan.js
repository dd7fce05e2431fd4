#!/usr/bin/env node
// The `nodeclass-scan` command. Installed from the package it runs the bundled CLI; in a checkout
// (sources present, see README "Set-up") it runs the TypeScript sources through tsx instead, so a
// stale dist/ never answers for the code being edited.
import { existsSync } from 'node:fs';

const sources = new URL('../lambda/cli/nodeclass-scan.js', import.meta.url);
await import(existsSync(sources) ? sources.href : '../dist/lib/cli.js');
