import { httpErrors } from '@fastify/sensible';
import { type Bus, type ControlAsk, ControlTimeoutError, NoGatewayError, requestControl } from '@tracehub/bus';
import type { ControlReply } from '@tracehub/contracts';

/**
 * Asks the gateway that serves a link (`requestControl`); no gateway is a 503 and no answer
 * in time a 504, each with the bus helper's sentence as the problem's detail.
 */
export async function askGateway(
  bus: Bus,
  target: { rig: string; link: string },
  request: ControlAsk,
  timeoutMs: number,
): Promise<ControlReply> {
  try {
    return await requestControl(bus, target, request, timeoutMs);
  } catch (error) {
    if (error instanceof NoGatewayError) throw httpErrors.serviceUnavailable(error.message);
    if (error instanceof ControlTimeoutError) throw httpErrors.gatewayTimeout(error.message);
    throw error;
  }
}
