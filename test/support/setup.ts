// Unit tests never reach AWS: fake credentials and a fixed region make any unmocked call fail fast.
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
process.env.AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
process.env.POWERTOOLS_DEV = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
delete process.env.AWS_PROFILE;
