package main

import "github.com/agentrl/agentrl/chat"

// referenceChats are the texts `agentrl bench reference` scores with every
// implementation: short agent exchanges of the kinds the built-in
// environments produce (an instruction, an observation, an action), so that
// the log-probabilities compared are those training would compute.
var referenceChats = [][]chat.Message{
	agentTurn("You are a shopping assistant. Buy what the user asks for.",
		"Instruction: a pair of black running shoes, size 10, under 60 dollars. Search results: [1] Trail runner, black, $54.99 [2] Court sneaker, white, $39.00 [3] Road shoe, black, $72.50",
		"click[1]"),
	agentTurn("You are a shopping assistant. Buy what the user asks for.",
		"Product page: Trail runner, black. Sizes: 8, 9, 10, 11. Price: $54.99. Buttons: [size], [Buy Now], [Back to Search]",
		"select[size 10]"),
	agentTurn("You act in a household. Reach the goal with as few actions as possible.",
		"Goal: put a clean mug in the coffee machine. You are in the kitchen. You see a countertop 1, a sinkbasin 1, a cabinet 2 and a coffeemachine 1. On the countertop 1 you see a mug 1.",
		"take mug 1 from countertop 1"),
	agentTurn("You act in a household. Reach the goal with as few actions as possible.",
		"You pick up the mug 1. The mug is dirty. The sinkbasin 1 is to your left.",
		"clean mug 1 with sinkbasin 1"),
	agentTurn("You act in a household. Reach the goal with as few actions as possible.",
		"Goal: look at the book under the desk lamp. You are in the bedroom. You see a desk 1, a bed 1 and a shelf 3. On the desk 1 you see a desklamp 1 and a pen 2.",
		"go to shelf 3"),
	agentTurn("We play twenty questions. Ask yes/no questions to find the object.",
		"Answer: Yes, it is an animal. Questions left: 17.",
		"Does it live in water?"),
	agentTurn("We play twenty questions. Ask yes/no questions to find the object.",
		"Answer: No, it is not bigger than a bread box. Questions left: 12.",
		"Is it a kind of bird?"),
	agentTurn("We play twenty questions. Ask yes/no questions to find the object.",
		"Answer: Yes, you can find it in a kitchen. Questions left: 5.",
		"Is it a spoon?"),
	agentTurn("You are a retail support agent. Follow the policy; call tools as JSON.",
		"Customer: Hi, I want to return the lamp from order #W2871. It arrived broken.",
		`{"tool": "get_order_details", "order_id": "#W2871"}`),
	agentTurn("You are a retail support agent. Follow the policy; call tools as JSON.",
		`Tool result: {"order_id": "#W2871", "status": "delivered", "items": [{"item_id": "lamp-44", "price": 35.0}]}`,
		"The order was delivered, so the lamp can be returned. Shall I refund the $35.00 to your original payment method?"),
	agentTurn("You are a retail support agent. Follow the policy; call tools as JSON.",
		"Customer: Yes please, refund it to my card.",
		`{"tool": "return_delivered_order_items", "order_id": "#W2871", "item_ids": ["lamp-44"], "payment_method_id": "card-1"}`),
	agentTurn("Solve the problem step by step and end with the answer after ####.",
		"A train travels 120 km in 1.5 hours. What is its average speed in km/h?",
		"Speed is distance over time: 120 / 1.5 = 80.\n#### 80"),
	agentTurn("Solve the problem step by step and end with the answer after ####.",
		"Tom has 3 boxes of 12 pencils and gives away 7 pencils. How many are left?",
		"He has 3 * 12 = 36 pencils. 36 - 7 = 29.\n#### 29"),
	agentTurn("Solve the problem step by step and end with the answer after ####.",
		"What is 15% of 240?",
		"15% of 240 is 0.15 * 240 = 36.\n#### 36"),
	agentTurn("You control a terminal. Reply with one shell command.",
		"Task: count the lines of every Go file under src/. Output of `ls src`: main.go util.go README.md",
		"wc -l src/*.go"),
	agentTurn("You control a terminal. Reply with one shell command.",
		"Task: find which process listens on port 8080. Previous command printed nothing.",
		"ss -ltnp 'sport = :8080'"),
	agentTurn("You are a web navigation agent. Answer with one action.",
		"Page: Flight search. Fields: [From], [To], [Date]. Task: find a flight from Lisbon to Oslo on 12 May.",
		"type[From][Lisbon]"),
	agentTurn("You are a web navigation agent. Answer with one action.",
		"Page: Results. 1. TP 742, 08:10, 289 EUR. 2. SK 1810, 13:45, 214 EUR. Task: pick the cheapest flight.",
		"click[SK 1810]"),
	agentTurn("You are a helpful assistant. Critique the action, then say whether it was good.",
		"State: the agent is in the kitchen and must heat an egg. Action: go to fridge 1.",
		"The egg is most likely in the fridge, so going there first is the shortest path to the goal. Good action."),
	agentTurn("You are a helpful assistant. Critique the action, then say whether it was good.",
		"State: the shopper needs a red scarf under 20 dollars. Action: click[Wool scarf, blue, $18].",
		"The scarf is blue, not red, so the action does not satisfy the instruction. Bad action."),
}

func agentTurn(instruction, observation, action string) []chat.Message {
	return []chat.Message{
		{Role: chat.System, Content: instruction},
		{Role: chat.User, Content: observation},
		{Role: chat.Assistant, Content: action},
	}
}
