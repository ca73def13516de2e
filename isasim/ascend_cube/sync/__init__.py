"""The cube's pipes and the events that order them: which pipe runs each instruction (events.py), the
happens-before check of every buffer and GM access (race_check.py), and the order the pipes' queues run in
(schedule.py); pipe_model.py holds one run's pipes, flags and both."""
