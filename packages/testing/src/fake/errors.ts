/**
 * One violated rule of a request, as core's validators report it.
 *
 * @example
 * const fields = (error as FakeServiceError).violations.map((v: FakeViolation) => v.field);
 */
export interface FakeViolation {
  field: string;
  code: string;
  message: string;
}

/**
 * An error the fake service answers with. `code` is the public code the service's error bodies carry
 * (`S-404`, `P-409`) or one the toolkit chose where the spec shows none (see docs/assumptions.md); `status` is
 * the HTTP status the API answers.
 *
 * @example
 * try { fake.refund(paymentId, 1_000_000); } catch (error) {
 *   if (error instanceof FakeServiceError) console.log(error.code); // 'R-422'
 * }
 */
export class FakeServiceError extends Error {
  override readonly name = 'FakeServiceError';
  readonly code: string;
  readonly status: number;
  readonly violations: readonly FakeViolation[];

  constructor(code: string, status: number, message: string, violations: readonly FakeViolation[] = []) {
    super(message);
    this.code = code;
    this.status = status;
    this.violations = violations;
  }

  /** The API's error body: `{"message": ..., "args": {"code": ..., "violations"?: [...]}}`. */
  toBody(): { message: string; args: { code: string; violations?: readonly FakeViolation[] } } {
    return {
      message: this.message,
      args:
        this.violations.length > 0 ? { code: this.code, violations: this.violations } : { code: this.code },
    };
  }
}

/** The service's public answer to bad credentials (and a pos_id that is not the caller's). */
export function credentialsError(): FakeServiceError {
  return new FakeServiceError('S-404', 401, 'Invalid pos_id field or credentials');
}
