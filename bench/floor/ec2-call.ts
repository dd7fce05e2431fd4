// Cold-start floor: one EC2 call and nothing else, bundled with the handlers' esbuild options and
// run by the same harness in the same environment. The least any AWS-calling handler pays.
import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';

export const handler = async (event: { readonly imageId?: string }) => {
  const { Images = [] } = await new EC2Client({}).send(
    new DescribeImagesCommand(event.imageId === undefined ? {} : { ImageIds: [event.imageId] })
  );
  return { images: Images.length };
};
