/** The delivery core's one error of its own: a delivery no handler can ever take. */
import { EvgenError } from '../errors.js';

/** A delivery evgen cannot even hand to a handler (body not JSON, ids disagree). Never retryable. */
export class MalformedMessageError extends EvgenError {
  readonly retryable = false;
  readonly code = 'MalformedMessageError';
  constructor(message: string) {
    super(message);
    this.name = 'MalformedMessageError';
  }
}
