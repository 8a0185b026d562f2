/** rls, the command line over the HTTP API; see docs/cli.md. */
package io.rlscheduler.cli;
