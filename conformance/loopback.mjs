// @ts-check
/**
 * An HTTP server of a conformance run listening on 127.0.0.1 at a free port, and its close (which
 * also ends the connections a CLI under test keeps alive).
 */

/**
 * @param {import('node:http').Server} server
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function listenOnLoopback(server) {
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
