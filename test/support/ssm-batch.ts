// GetParameters answered from the same per-name answer a test gives GetParameter: what SSM returns
// for a batch is each name's GetParameter answer, missing names listed in InvalidParameters.
import { ParameterNotFound } from '@aws-sdk/client-ssm';

interface ParameterAnswer {
  readonly Parameter?: {
    Name?: string | undefined;
    Type?: string | undefined;
    Value?: string | undefined;
  };
}

export function getParametersFrom(
  getParameter: (input: { Name: string }) => Promise<ParameterAnswer>
) {
  return async (input: { Names?: string[] }) => {
    const Parameters: NonNullable<ParameterAnswer['Parameter']>[] = [];
    const InvalidParameters: string[] = [];
    for (const name of input.Names ?? []) {
      try {
        const answer = await getParameter({ Name: name });
        if (answer.Parameter) Parameters.push({ Name: name, ...answer.Parameter });
      } catch (error) {
        if (!(error instanceof ParameterNotFound)) throw error;
        InvalidParameters.push(name);
      }
    }
    return { Parameters, InvalidParameters };
  };
}
