/**
 * The relay's view of a broker outage: consecutive unavailability failures and when the relay
 * may try again. Shared by every batch, so one outage holds back all of them.
 */
export class BrokerOutage {
  /** Consecutive unavailability failures; reset by any confirmed publish. */
  streak = 0;
  /** Epoch ms before which no publish starts. */
  until = 0;
}
