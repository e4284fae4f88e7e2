#pragma once

namespace bk::cli {

// The whole `bk` command line: dispatch, error rendering, exit status.
int Main(int argc, char** argv);

}  // namespace bk::cli
