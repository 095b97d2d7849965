/**
 * Where a relative test request goes: a local project's address, as under
 * `platform dev`; the test kit's callback URLs point there too.
 * @example
 * await testRequest(project, `${TEST_ORIGIN}/health`);
 */
export const TEST_ORIGIN = "http://test-project.localhost";
