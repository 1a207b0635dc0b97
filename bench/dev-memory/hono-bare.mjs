// The peer: a bare Hono server on @hono/node-server answering one route, the least an HTTP service in this stack
// costs. Started by index.ts with the port in PORT.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/health', (c) => c.json({ status: 'ok' }));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' }, () => console.log('listening'));
