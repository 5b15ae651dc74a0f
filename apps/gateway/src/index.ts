export { GatewayConfigSchema } from './config.js';
