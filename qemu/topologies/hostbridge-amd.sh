# The hostbridge topology with an AMD Zen guest CPU, whose root complex
# routes P2P between host bridges: the same paths are allowed.
# shellcheck source=hostbridge.sh
. "$(dirname "${BASH_SOURCE[0]}")/hostbridge.sh"
cpu EPYC,vendor=AuthenticAMD
