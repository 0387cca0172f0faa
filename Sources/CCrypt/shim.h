// libcrypt (libxcrypt): the password hashes of --http-auth files (bcrypt as htpasswd -B makes
// them, SHA-crypt as openssl passwd -5/-6 does, yescrypt as mkpasswd does).
#include <crypt.h>
