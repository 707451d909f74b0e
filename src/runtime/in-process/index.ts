// The in-process transport: no server, the RabbitMQ runner's retry and dead-letter rules.
export * from './in-process-broker.js';
