package io.relay.deny;

/**
 * A booking's standing as this node's replica of the deny list has it, read from any thread
 * without asking the list's actor ({@link DenyListStatus} answers it): what a code request and an
 * admission check.
 */
@FunctionalInterface
public interface DenyVerdicts {
  DenyList.Verdict verdict(String bookingId);
}
