import fc from 'fast-check';

// Unit tests never reach AWS: fake credentials and a fixed region make any unmocked call fail fast.
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
process.env.AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
process.env.POWERTOOLS_DEV = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
delete process.env.AWS_PROFILE;

// CI must be reproducible: property tests run from a fixed seed unless FC_SEED names another
// (`FC_SEED=random npx vitest run` explores new cases locally).
const seed = process.env.FC_SEED;
if (seed !== 'random') fc.configureGlobal({ seed: seed === undefined ? 20_261_122 : Number(seed) });
