// Phase of the dispatch function: the EKS listing, loaded only when discovery is configured.
import { EKSClient } from '@aws-sdk/client-eks';
import { clientDefaults } from '../../adapters/aws/client-defaults.js';
import { createEksReader } from '../../adapters/aws/eks-reader.js';
import type { ClusterLister } from '../../app/dispatch.js';

/** One EKS client per region, created on first use. */
export function createClusterLister(): ClusterLister {
  const eksByRegion = new Map<string, EKSClient>();
  return {
    listClusters: (region, tagFilter) => {
      let eks = eksByRegion.get(region);
      if (!eks) {
        eks = new EKSClient({ ...clientDefaults(), region });
        eksByRegion.set(region, eks);
      }
      return createEksReader({ eks }).listClusters(tagFilter);
    },
  };
}
