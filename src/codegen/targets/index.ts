/** Every output target evgen knows, in the order they run. The config file may select a subset. */
import type { Target } from '../target.js';
import { consumersTarget } from './consumers.js';

export const allTargets: readonly Target[] = [consumersTarget];
