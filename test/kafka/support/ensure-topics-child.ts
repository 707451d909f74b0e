/**
 * The topic set-up of docs/guides/kafka.md as a whole program: create a client, `ensureKafkaTopics(kafka, …)`,
 * print what was created, and return from the module without any explicit exit. The parent
 * checks that the process ends by itself (no admin connection left open).
 * Usage: tsx ensure-topics-child.ts <adapter> <brokers> <prefix>
 */
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { platformaticClient } from 'evgen-runtime/platformatic-kafka';
import { ensureKafkaTopics } from '../../../generated/kafka/topics.js';

const [adapter, brokers, prefix] = process.argv.slice(2);
const kafka = (adapter === 'kafkajs' ? kafkajsClient : platformaticClient)({ brokers: [brokers!] });
const result = await ensureKafkaTopics(kafka, { prefix });
process.stdout.write(`${JSON.stringify(result.created)}\n`);
