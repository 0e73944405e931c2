/**
 * The keys job requests are sealed with (./request-sealing.ts), as this deployment has them:
 * the KMS key named by JOB_REQUEST_KEY_ARN in AWS, or the local stack's JOB_REQUEST_SECRET.
 *
 * KMS wraps each request's 32-byte data key with Encrypt, and unwraps it with Decrypt, under an
 * encryption context naming the request's object key: KMS refuses to decrypt a data key for any
 * other object. Only the job function's role may call Decrypt (cdk/stack.ts), so a request the
 * generate or batch function stored cannot be read back by them, nor by anything else that can read
 * the bucket.
 */
import { DecryptCommand, EncryptCommand } from '@aws-sdk/client-kms';
import { kms } from '#lib/aws/clients.ts';
import { settings } from '#lib/settings.ts';
import { localKeyUnwrapper, localKeyWrapper, SealedRequestError, type DataKeyUnwrapper, type DataKeyWrapper } from './request-sealing.ts';

/** KMS's encryption context of a request's data key: logged by CloudTrail with every use of the key. */
const encryptionContext = (objectKey: string) => ({ job_request: objectKey });

/** Wraps data keys with KMS Encrypt (the functions that submit jobs hold kms:Encrypt on the key). */
function kmsKeyWrapper(keyArn: string): DataKeyWrapper {
  return {
    scheme: 'kms',
    wrap: async (dataKey, objectKey) => {
      const { CiphertextBlob } = await kms().send(new EncryptCommand({ KeyId: keyArn, Plaintext: dataKey, EncryptionContext: encryptionContext(objectKey) }));
      if (!CiphertextBlob) throw new Error('KMS Encrypt answered without a ciphertext');
      return CiphertextBlob;
    },
  };
}

/** Unwraps data keys with KMS Decrypt (the job function alone holds kms:Decrypt on the key). */
function kmsKeyUnwrapper(keyArn: string): DataKeyUnwrapper {
  return {
    scheme: 'kms',
    unwrap: async (wrapped, objectKey) => {
      try {
        const { Plaintext } = await kms().send(new DecryptCommand({ KeyId: keyArn, CiphertextBlob: wrapped, EncryptionContext: encryptionContext(objectKey) }));
        if (!Plaintext) throw new Error('KMS Decrypt answered without a plaintext');
        return Plaintext;
      } catch (error) {
        // Another object's data key (its encryption context differs), or an altered one: final.
        if (error instanceof Error && error.name === 'InvalidCiphertextException') {
          throw new SealedRequestError('The job request’s key does not open: it was altered, or sealed for another job', { cause: error });
        }
        throw error;
      }
    },
  };
}

/** How the functions that submit jobs seal their requests here. */
export function jobRequestKeyWrapper(): DataKeyWrapper {
  const keyArn = settings.jobRequestKeyArn;
  return keyArn ? kmsKeyWrapper(keyArn) : localKeyWrapper(settings.jobRequestSecret);
}

/** How the function that runs jobs opens their requests here. */
export function jobRequestKeyUnwrapper(): DataKeyUnwrapper {
  const keyArn = settings.jobRequestKeyArn;
  return keyArn ? kmsKeyUnwrapper(keyArn) : localKeyUnwrapper(settings.jobRequestSecret);
}
