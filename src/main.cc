// bk: GPU booking for shared Linux servers. main() only dispatches.
#include "cli/app.h"

int main(int argc, char** argv) { return bk::cli::Main(argc, argv); }
