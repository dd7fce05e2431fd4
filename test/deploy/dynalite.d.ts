// dynalite ships no types; the simulation uses its server factory only.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  export default function dynalite(options?: {
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
  }): Server;
}
