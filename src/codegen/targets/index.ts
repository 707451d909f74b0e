/** Every output target evgen knows, in the order they run. The config file may select a subset. */
import type { Target } from '../target.js';
import { consumersTarget } from './consumers.js';
import { envelopesTarget } from './envelopes.js';
import { indexModuleTarget } from './index-module.js';
import { kafkaTarget } from './kafka.js';
import { outboxTarget } from './outbox.js';
import { pulsarTarget } from './pulsar.js';
import { typesTarget } from './types.js';
import { rabbitmqTarget } from './rabbitmq.js';
import { validatorsTarget } from './validators.js';

export const allTargets: readonly Target[] = [
  typesTarget,
  validatorsTarget,
  envelopesTarget,
  indexModuleTarget,
  consumersTarget,
  rabbitmqTarget,
  kafkaTarget,
  pulsarTarget,
  outboxTarget,
];
