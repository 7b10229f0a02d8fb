/* This instance's role in a lease: standing by, or leading, with the two
 * steps between (a service's promote and demote). */
#ifndef LEADERRUN_ROLE_H
#define LEADERRUN_ROLE_H

enum role_kind { ROLE_STANDBY, ROLE_PROMOTING, ROLE_LEADER, ROLE_DEMOTING };

#endif
