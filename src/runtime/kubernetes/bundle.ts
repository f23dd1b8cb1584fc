// The agent bundle: how the agent server gets into a sandbox image that is the user's (any Linux
// image with a shell, holding the project's toolchain), without being baked into it.
//
// The agentyard image holds, at BUNDLE_DIR, a Node runtime that needs nothing from the image it
// runs in (its own dynamic loader and libraries, see agent-bundle.sh beside this file) and the
// application with its production node_modules (better-sqlite3's prebuilt addon included). A sandbox Pod's
// init container, from the agentyard image, copies it into an emptyDir that the sandbox container
// mounts read-only at the same path, where the bundle's ELF interpreter path points; the sandbox
// container runs the agent server from there. Nothing is added to the environment, so the agent's
// own commands use the image's programs and libraries.

/** Where the bundle sits, in the agentyard image and in every sandbox container. */
export const BUNDLE_DIR = '/agentyard';
/** The bundle's Node (its interpreter and library path point into BUNDLE_DIR/lib). */
export const BUNDLE_NODE = `${BUNDLE_DIR}/bin/node`;
/** The CLI entry point, run by Node directly (native type stripping, no build step). */
export const BUNDLE_CLI = `${BUNDLE_DIR}/app/src/cli/main.ts`;
/** Where the init container mounts the shared volume it copies the bundle into. */
export const BUNDLE_STAGING = '/mnt/agentyard';
